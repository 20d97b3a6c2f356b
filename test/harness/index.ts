export * from './servers';
export * from './requirements';
export * from './kafka';
export * from './wait';
export * from './suite-database';
export * from './kafka-faults';
export * from './kafka-fault-proxy';
