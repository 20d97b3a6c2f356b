import { NestFactory } from '@nestjs/core';
import { appConfig } from './app.config.js';
import { AppModule } from './app.module.js';
import { connectOrderEvents } from './app.setup.js';

async function bootstrap() {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks();
  connectOrderEvents(app, appConfig());
  await app.startAllMicroservices();
  await app.listen(process.env.PORT ?? 3000);
}
void bootstrap();
