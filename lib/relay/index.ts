export * from './relay.options';
