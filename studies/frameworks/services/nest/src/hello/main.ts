import { NestFactory } from '@nestjs/core';
import { MicroserviceOptions, Transport } from '@nestjs/microservices';
import { address } from '../common/env.js';
import { HelloModule } from './hello.module.js';

async function bootstrap() {
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(HelloModule, {
    transport: Transport.TCP,
    options: address('HELLO_ADDR'),
  });
  app.enableShutdownHooks();
  await app.listen();
}
void bootstrap();
