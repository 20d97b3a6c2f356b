import type { InjectionToken, Type } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { OutboxEmitter } from '../events/outbox.emitter';
import { TransactionRunner } from '../transaction/transaction.runner';

/**
 * The injection token of an `OutboxModule` service for a Mongoose connection, following
 * @nestjs/mongoose's `getModelToken(name, connectionName)`: the class itself for the default
 * connection (plain constructor injection works), `'<connection token>/<Class>'` for a named one.
 * A named module exports its services under these tokens only, so two modules (two databases) can
 * never be confused: `@InjectOutboxEmitter('billing')` reaches the billing module's emitter.
 */
export function getOutboxToken<T>(service: Type<T>, connectionName?: string): InjectionToken<T> {
  if (connectionName === undefined) return service;
  return `${getConnectionToken(connectionName)}/${service.name}`;
}

/** Token of the `OutboxEmitter` of `connectionName`'s OutboxModule (default connection: the class). */
export function getOutboxEmitterToken(connectionName?: string): InjectionToken<OutboxEmitter> {
  return getOutboxToken(OutboxEmitter, connectionName);
}

/** Token of the `TransactionRunner` of `connectionName`'s OutboxModule (default: the class). */
export function getTransactionRunnerToken(
  connectionName?: string,
): InjectionToken<TransactionRunner> {
  return getOutboxToken(TransactionRunner, connectionName);
}
