import type { Fault, FaultKind } from './schedule.types';

/** The faults of a schedule, queried by kind and time (a schedule has a handful: a scan is fine). */
export class ActiveFaults {
  constructor(private readonly faults: readonly Fault[]) {}

  /** Faults of `kind` active at `time` (`at <= time < at + duration`) that match `where`. */
  at(kind: FaultKind, time: number, where?: (fault: Fault) => boolean): Fault[] {
    return this.faults.filter(
      (fault) =>
        fault.kind === kind &&
        fault.at <= time &&
        time < fault.at + fault.duration &&
        (!where || where(fault)),
    );
  }

  any(kind: FaultKind, time: number, where?: (fault: Fault) => boolean): boolean {
    return this.at(kind, time, where).length > 0;
  }

  /** The highest `param` among active faults of `kind` (0 when none). */
  maxParam(kind: FaultKind, time: number, where?: (fault: Fault) => boolean): number {
    return this.at(kind, time, where).reduce((max, fault) => Math.max(max, fault.param), 0);
  }

  all(kind: FaultKind): Fault[] {
    return this.faults.filter((fault) => fault.kind === kind);
  }
}
