export * from './diagnostic-channels';
