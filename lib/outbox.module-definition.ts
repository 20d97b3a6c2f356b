import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { OutboxModuleOptions } from './options/outbox-options.interface';

/** Options of `forRoot`/`forRootAsync` that shape the module, not the outbox. */
export interface OutboxModuleExtras {
  /** Register the module globally (its exports, e.g. `OutboxEmitter`, injectable everywhere). */
  isGlobal?: boolean;
}

export const {
  ConfigurableModuleClass: ConfigurableOutboxModule,
  MODULE_OPTIONS_TOKEN: OUTBOX_MODULE_OPTIONS,
  OPTIONS_TYPE: OUTBOX_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: OUTBOX_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<OutboxModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras<OutboxModuleExtras>({ isGlobal: false }, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();
