export * from './servers';
export * from './requirements';
export * from './kafka';
export * from './wait';
export * from './suite-database';
