import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { Request } from 'express';

/**
 * Lets a request through only with a valid bearer token: HS256 with the
 * shared secret, for the configured audience, not expired (JwtModule's
 * verifyOptions in gateway.module.ts). Anything else is 401 with the reason.
 */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(private readonly jwt: JwtService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const [type, token] = request.headers.authorization?.split(' ') ?? [];
    if (type !== 'Bearer' || !token) {
      throw new UnauthorizedException('missing bearer token');
    }
    try {
      await this.jwt.verifyAsync(token);
    } catch (err) {
      throw new UnauthorizedException((err as Error).message);
    }
    return true;
  }
}
