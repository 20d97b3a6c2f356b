import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { systemClock, type RelayClock } from './ports/relay-clock';

/** What the relay uses of @nestjs/schedule's `SchedulerRegistry`. */
interface SchedulerRegistryLike {
  addInterval(name: string, intervalId: ReturnType<typeof setInterval>): void;
  deleteInterval(name: string): void;
  doesExist(type: 'interval', name: string): boolean;
}

function isRegistry(value: unknown): value is SchedulerRegistryLike {
  const candidate = value as Partial<SchedulerRegistryLike> | null;
  return (
    typeof candidate?.addInterval === 'function' &&
    typeof candidate.deleteInterval === 'function' &&
    typeof candidate.doesExist === 'function'
  );
}

/**
 * The app's `SchedulerRegistry` when it imports `ScheduleModule.forRoot()` from @nestjs/schedule (an
 * optional peer dependency), found among the app's providers by Nest's `DiscoveryService`, so
 * nothing of @nestjs/schedule is imported (the same code runs in CommonJS and ES module apps).
 */
function findSchedulerRegistry(discovery: DiscoveryService): SchedulerRegistryLike | undefined {
  const found = discovery
    .getProviders()
    .find((wrapper) => wrapper.name === 'SchedulerRegistry' && isRegistry(wrapper.instance));
  return found?.instance as SchedulerRegistryLike | undefined;
}

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
