import type { ModuleRef } from '@nestjs/core';

/** What the relay uses of @nestjs/schedule's `SchedulerRegistry`. */
export interface SchedulerRegistryLike {
  addInterval(name: string, intervalId: ReturnType<typeof setInterval>): void;
  deleteInterval(name: string): void;
  doesExist(type: 'interval', name: string): boolean;
}

/**
 * The app's `SchedulerRegistry`, when @nestjs/schedule (an optional peer dependency) is
 * installed and the app imports `ScheduleModule.forRoot()`; otherwise undefined.
 */
export function findSchedulerRegistry(moduleRef: ModuleRef): SchedulerRegistryLike | undefined {
  let token: unknown;
  try {
    token = (require('@nestjs/schedule') as { SchedulerRegistry?: unknown }).SchedulerRegistry;
  } catch {
    return undefined;
  }
  if (!token) return undefined;
  try {
    return moduleRef.get(token as never, { strict: false }) as SchedulerRegistryLike;
  } catch {
    return undefined;
  }
}
