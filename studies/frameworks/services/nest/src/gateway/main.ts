import { NestFactory } from '@nestjs/core';
import { Server } from 'node:http';
import { address, duration } from '../common/env.js';
import { GatewayModule } from './gateway.module.js';

async function bootstrap() {
  // forceCloseConnections: a keep-alive client must not hold the shutdown.
  const app = await NestFactory.create(GatewayModule, { forceCloseConnections: true });
  app.enableShutdownHooks();
  // connectionsCheckingInterval is missing from Node's typings of Server.
  const server: Server & { connectionsCheckingInterval: number } = app.getHttpServer();
  // Node's own limits on slow clients: the whole header, the whole request.
  server.headersTimeout = duration('READ_HEADER_TIMEOUT', 5000);
  server.requestTimeout = duration('READ_TIMEOUT', 10000);
  // Node enforces both on this period (30 s by default); it is read when
  // the server starts listening.
  server.connectionsCheckingInterval = 250;
  const { host, port } = address('ADDR');
  await app.listen(port, host);
}
void bootstrap();
