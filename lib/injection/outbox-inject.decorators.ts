import { Inject } from '@nestjs/common';
import { getOutboxEmitterToken, getTransactionRunnerToken } from './outbox-token.utils';

/**
 * Injects the `OutboxEmitter` of the OutboxModule of `connectionName` (as `@InjectConnection(name)`
 * does for the connection). Without a name, the default connection's (same as typing the parameter
 * `OutboxEmitter`).
 */
export const InjectOutboxEmitter = (
  connectionName?: string,
): ParameterDecorator & PropertyDecorator => Inject(getOutboxEmitterToken(connectionName));

/** Injects the `TransactionRunner` of the OutboxModule of `connectionName` (default connection without). */
export const InjectTransactionRunner = (
  connectionName?: string,
): ParameterDecorator & PropertyDecorator => Inject(getTransactionRunnerToken(connectionName));
