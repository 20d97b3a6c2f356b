import {
  ChangeSourceError,
  type ChangeBatch,
  type ChangeCursor,
  type ChangeSource,
  type ResumeToken,
} from '../../../lib/relay/ports/change-source';
import type { OutboxEventRecord } from '../../../lib/documents/outbox-event.document';
import type { SimRandom } from '../core/sim.random';
import type { ActiveFaults } from '../schedule/active-faults';
import type { SimHistory } from '../world/sim.history';
import type { CursorAnswer, SimChangeStreams } from './sim-change-streams';
import type { DbAnswer, SimMongoConnection } from './sim-mongo.connection';
import { mongoErrors } from './sim-mongo.error';
import type { SimMongoError } from './sim-mongo.error';
import { asSimToken } from './sim-token';
import { recordHanded } from './sim-outbox.store';
import type { SlotRange } from '../../../lib/relay/ports/partition-layout';

/**
 * `ChangeSource` over the simulated change streams: what `collection.watch()` with an insert
 * filter, majority read concern and `maxAwaitTimeMS = idleMs` gives the relay. Errors come as
 * `ChangeSourceError` (sometimes as the raw server error, which the port says is transient).
 */
export class SimChangeSource implements ChangeSource {
  constructor(
    private readonly connection: SimMongoConnection,
    private readonly streams: SimChangeStreams,
    private readonly history: SimHistory,
    private readonly faults: ActiveFaults,
    private readonly random: SimRandom,
    private readonly options: {
      batchSize: number;
      idleMs: number;
      range?: SlotRange;
      /** A cluster-wide stream (`client.watch()`) over these tenant databases' outboxes. */
      databases?: readonly string[];
    },
  ) {}

  async open(from: ResumeToken | undefined): Promise<ChangeCursor> {
    const token = from === undefined ? undefined : asSimToken(from);
    const id = await this.connection.request<number>({ name: 'watch', write: false }, (respond) => {
      if (this.cursorFault()) {
        respond({
          ok: false,
          error: this.asError('transient', mongoErrors.network()),
          applied: false,
        });
        return;
      }
      const opened = this.streams.openCursor(token, this.options);
      if ('id' in opened) respond({ ok: true, value: opened.id });
      else respond(this.failure(opened));
    });
    return new SimChangeCursor(
      this.connection,
      this.history,
      this.streams,
      this.options,
      id,
      () => this.cursorFault(),
      (kind, error) => this.asError(kind, error),
    );
  }

  private cursorFault(): boolean {
    const rate = this.faults.maxParam('cursor-error', this.connection.now()) / 100;
    const hit = this.random.chance(rate);
    if (hit) this.history.countEffect('cursor-error');
    return hit;
  }

  private failure<T>(answer: CursorAnswer): DbAnswer<T> {
    if (answer.ok) throw new Error('not a failure');
    return { ok: false, error: this.asError(answer.kind, answer.error), applied: false };
  }

  /** The error as the relay's change source adapter would give it. */
  private asError(kind: 'transient' | 'position-lost', error: SimMongoError): Error {
    if (kind === 'transient' && this.random.chance(0.2)) return error;
    return new ChangeSourceError(kind, `${error.codeName}: ${error.message}`, error);
  }
}

class SimChangeCursor implements ChangeCursor {
  private closed = false;

  constructor(
    private readonly connection: SimMongoConnection,
    private readonly history: SimHistory,
    private readonly streams: SimChangeStreams,
    private readonly options: { batchSize: number; idleMs: number },
    private readonly id: number,
    private readonly cursorFault: () => boolean,
    private readonly asError: (kind: 'transient' | 'position-lost', error: SimMongoError) => Error,
  ) {}

  next(max: number): Promise<ChangeBatch> {
    const issuedAt = this.connection.now();
    const onAnswer = (batch: ChangeBatch): void =>
      recordHanded(
        this.history,
        this.connection,
        'stream',
        batch.changes.map((change) => change.event),
        this.connection.now(),
        issuedAt,
      );
    return this.connection.request<ChangeBatch>(
      { name: 'cursor.next', write: false, onAnswer },
      (respond) => {
        if (this.cursorFault()) {
          this.streams.kill(this.id);
          respond({
            ok: false,
            error: this.asError('transient', mongoErrors.network()),
            applied: false,
          });
          return;
        }
        this.streams.read(this.id, Math.max(1, max), this.options.idleMs, (answer) => {
          if (!answer.ok) {
            respond({ ok: false, error: this.asError(answer.kind, answer.error), applied: false });
            return;
          }
          respond({
            ok: true,
            value: {
              changes: answer.changes.map((change) => ({
                token: { ...change.token },
                event: change.doc as unknown as OutboxEventRecord,
                ...(change.database !== undefined ? { database: change.database } : {}),
              })),
              position: { ...answer.position },
            },
          });
        });
      },
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.connection
      .request<void>({ name: 'cursor.close', write: false }, (respond) => {
        this.streams.kill(this.id);
        respond({ ok: true, value: undefined });
      })
      .catch(() => undefined);
  }
}
