export { KafkaFaultProxy } from './kafka-fault-proxy';
export type { KafkaFaultProxyOptions } from './kafka-fault-proxy';
export { ArmedFault } from './faults';
export type { FaultAction, FaultFiring, FaultSpec } from './faults';
export { API_KEYS, FrameReader } from './kafka-frames';
export type { ApiName } from './kafka-frames';
