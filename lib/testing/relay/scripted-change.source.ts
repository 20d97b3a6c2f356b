import type { OutboxEventRecord } from '../../documents/outbox-event.document';
import { ChangeSourceError } from '../../relay/ports/change-source';
import type {
  ChangeBatch,
  ChangeCursor,
  ChangeSource,
  ResumeToken,
} from '../../relay/ports/change-source';

/**
 * A change stream over a list of inserts (`push`), positions are their indexes. Opening after a
 * position before `historyStart` fails as a lost position; `failNext` makes the next `open` or
 * `next` fail (transient, or as given).
 */
export class ScriptedChangeSource implements ChangeSource {
  readonly inserts: OutboxEventRecord[] = [];
  readonly opened: Array<ResumeToken | undefined> = [];
  historyStart = 0;
  failNext: Array<Error | 'transient'> = [];
  idleMs = 5;

  push(...events: OutboxEventRecord[]): void {
    this.inserts.push(...events);
  }

  private failure(): Error | undefined {
    const next = this.failNext.shift();
    if (next === undefined) return undefined;
    return next === 'transient'
      ? new ChangeSourceError('transient', 'scripted read failure')
      : next;
  }

  async open(from: ResumeToken | undefined): Promise<ChangeCursor> {
    this.opened.push(from);
    const failure = this.failure();
    if (failure) throw failure;
    if (from !== undefined && (from as number) < this.historyStart - 1) {
      throw new ChangeSourceError(
        'position-lost',
        'resume point no longer in the oplog (code 286)',
      );
    }
    let position = from === undefined ? this.inserts.length - 1 : (from as number);
    const next = async (max: number): Promise<ChangeBatch> => {
      const failure = this.failure();
      if (failure) throw failure;
      const changes = this.inserts
        .slice(position + 1, position + 1 + max)
        .map((event, i) => ({ token: position + 1 + i, event }));
      if (changes.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, this.idleMs));
        return { changes: [], position };
      }
      position += changes.length;
      return { changes, position };
    };
    return { next, close: async () => undefined };
  }
}
