export * from './consumer.options';
