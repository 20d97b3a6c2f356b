import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { findSchedulerRegistry } from './optional-scheduler-registry';
import type { SchedulerRegistryLike } from './optional-scheduler-registry';
import { systemClock } from './ports/relay-clock';
import type { RelayClock } from './ports/relay-clock';

/**
 * The relay's clock in a Nest app. Its periodic jobs (per relay `name`):
 * `nestjs-outbox:relay:<name>:lease` (renew or acquire the lease, every `lease.renewMs`),
 * `nestjs-outbox:relay:<name>:sweep` and `nestjs-outbox:relay:<name>:checkpoint` (while this
 * instance leads). When the app imports `ScheduleModule.forRoot()` from @nestjs/schedule, they
 * are registered in its `SchedulerRegistry` under those names, so the app can list them;
 * otherwise they are plain unref'd intervals. One-off timers (retries, backoff, the lease
 * watchdog) are per term and stay plain timers.
 */
@Injectable()
export class RelayScheduling implements OnModuleInit {
  private readonly logger = new Logger('RelayScheduling');
  private registry?: SchedulerRegistryLike;

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.registry = findSchedulerRegistry(this.discovery);
  }

  clock(): RelayClock {
    const registry = this.registry;
    if (!registry) return systemClock;
    return {
      ...systemClock,
      every: (name, ms, fn) => {
        const handle = setInterval(fn, Math.max(1, ms));
        handle.unref?.();
        let registered = false;
        try {
          registry.addInterval(name, handle);
          registered = true;
        } catch (error) {
          this.logger.warn(
            `Interval ${name} not registered in the SchedulerRegistry: ${(error as Error).message}`,
          );
        }
        return {
          cancel: () => {
            clearInterval(handle);
            if (registered && registry.doesExist('interval', name)) registry.deleteInterval(name);
          },
        };
      },
    };
  }
}
