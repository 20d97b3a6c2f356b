import type { DiscoveryService } from '@nestjs/core';

/** What the relay uses of @nestjs/schedule's `SchedulerRegistry`. */
export interface SchedulerRegistryLike {
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
export function findSchedulerRegistry(
  discovery: DiscoveryService,
): SchedulerRegistryLike | undefined {
  for (const wrapper of discovery.getProviders()) {
    if (wrapper.name === 'SchedulerRegistry' && isRegistry(wrapper.instance))
      return wrapper.instance;
  }
  return undefined;
}
