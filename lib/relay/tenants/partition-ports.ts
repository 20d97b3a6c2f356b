import { slotsOfPartition, type SlotRange } from '../ports/partition-layout';
import type { RelayLayout } from '../ports/relay-partitions.store';

/**
 * The tenant ports of each partition of the latest layout asked for, made once per partition
 * (`TenantPorts.forPartition`): a partition's terms come and go with its lease and share them.
 * A term of an older layout keeps the ports it has until it ended; none is made anew for it.
 */
export class PartitionPorts<Ports> {
  private current?: { generation: number; ports: Map<number, Ports> };

  constructor(
    private readonly make: (range: SlotRange, layout: RelayLayout, partition: number) => Ports,
  ) {}

  of(layout: RelayLayout, partition: number): Ports {
    if (this.current?.generation !== layout.generation) {
      this.current = { generation: layout.generation, ports: new Map() };
    }
    let ports = this.current.ports.get(partition);
    if (!ports) {
      ports = this.make(slotsOfPartition(partition, layout.partitions), layout, partition);
      this.current.ports.set(partition, ports);
    }
    return ports;
  }
}
