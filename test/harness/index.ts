export * from './servers';
export * from './requirements';
export * from './kafka';
