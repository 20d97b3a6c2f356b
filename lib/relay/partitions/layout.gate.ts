import { describeError } from '../../common/errors/describe-error';
import type { RelayLogger } from '../ports/relay-logger';
import type { RelayLayout, RelayMembershipStore } from '../ports/relay-partitions.store';

/** What the stored layout means for an instance configured with `partitions`. */
export type LayoutVerdict =
  /** The stored layout is ours: relay it. */
  | { kind: 'run'; layout: RelayLayout | undefined }
  /** Another layout is stored and some of its leases are still valid: relay nothing. */
  | { kind: 'wait'; stored: RelayLayout | undefined };

/**
 * The layout switch, in two steps so that two layouts never publish at once: an instance
 * whose `partitions` differs from the stored layout relays nothing (and says so once) until
 * no lease of that layout is valid at the server's time; then it asks the store to switch.
 * The check here only avoids useless attempts: the switch itself makes sure no lease of the
 * old layout is valid (`RelayMembershipStore.switchLayout`). One instance wins; the others
 * read the new layout at their next tick. Without a stored layout, the layout is the single
 * lease of `partitions: 1`.
 */
export class LayoutGate {
  private warned?: string;

  constructor(
    private readonly membership: RelayMembershipStore,
    private readonly partitions: number,
    private readonly logger: RelayLogger,
  ) {}

  async check(serverNow: Date): Promise<LayoutVerdict> {
    const stored = await this.membership.layout();
    const storedPartitions = stored?.partitions ?? 1;
    if (storedPartitions === this.partitions) {
      this.warned = undefined;
      return { kind: 'run', layout: stored };
    }
    const leases = await this.membership.leases(stored);
    const valid = leases.filter((lease) => lease.expiresAt.getTime() > serverNow.getTime());
    if (valid.length > 0) {
      const key = `${stored?.generation ?? 0}`;
      if (this.warned !== key) {
        this.warned = key;
        this.logger.warn(
          `The outbox is split into ${storedPartitions} partition(s) (layout generation ${stored?.generation ?? 0}), ` +
            `this instance is configured with ${this.partitions}: it relays nothing until no relay of that layout ` +
            `holds a lease (${valid.length} do now), then switches the layout.`,
        );
      }
      return { kind: 'wait', stored };
    }
    let switched: RelayLayout | undefined;
    try {
      switched = await this.membership.switchLayout(stored, this.partitions);
    } catch (error) {
      this.logger.warn(`Could not switch the layout (retrying): ${describeError(error)}`);
      return { kind: 'wait', stored };
    }
    if (!switched) return { kind: 'wait', stored }; // another instance switched first
    this.warned = undefined;
    this.logger.log(
      `Switched the relay layout from ${storedPartitions} to ${switched.partitions} partition(s) (generation ${switched.generation}).`,
    );
    return { kind: 'run', layout: switched };
  }
}
