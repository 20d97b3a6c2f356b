export * from './outbox-dead-letters.service';
