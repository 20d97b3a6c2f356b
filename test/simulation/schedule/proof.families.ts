import type fc from 'fast-check';
import { destinationErrorSchedules } from './destination-errors.arbitrary';
import { dueLagSchedules } from './due-lag.arbitrary';
import { leasePressureSchedules } from './lease-pressure.arbitrary';
import { preSlotRetrySchedules } from './pre-slot-retries.arbitrary';
import { preSlotDeploySchedules } from './pre-slot.arbitrary';
import { retryTakeoverSchedules } from './retry-takeover.arbitrary';
import type { Schedule } from './schedule.types';
import { tenantSchedules } from './tenants.arbitrary';

/**
 * The families of issue 35, each aimed at defect classes that the broad families reach only by
 * luck, and issue 33's tenants family (`npm run simulate -- --family <name>`,
 * `proofs.simulation.spec.ts`).
 */
export const PROOF_FAMILIES: Readonly<Record<string, fc.Arbitrary<Schedule>>> = {
  'lease-pressure': leasePressureSchedules,
  'destination-errors': destinationErrorSchedules,
  'pre-slot-retries': preSlotRetrySchedules,
  'pre-slot-deploys': preSlotDeploySchedules(),
  'retry-takeover': retryTakeoverSchedules,
  'due-lag': dueLagSchedules,
  tenants: tenantSchedules,
};
