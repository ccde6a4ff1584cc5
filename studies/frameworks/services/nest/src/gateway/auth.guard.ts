import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { Request } from 'express';

/** A verified token as jsonwebtoken returns it with `complete: true`. */
interface Verified {
  header: { crit?: unknown };
  payload: { exp?: unknown };
}

/**
 * Lets a request through only with a valid bearer token: HS256 with the
 * shared secret, for the configured audience, not expired (JwtModule's
 * verifyOptions in gateway.module.ts), with an exp and no crit. Anything
 * else is 401 with the reason.
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
    let verified: Verified;
    try {
      verified = await this.jwt.verifyAsync<Verified>(token, { complete: true });
    } catch (err) {
      throw new UnauthorizedException((err as Error).message);
    }
    // jsonwebtoken checks exp only when a token has one, and has no option
    // to require it: a token without exp would never expire.
    if (verified.payload.exp === undefined) {
      throw new UnauthorizedException('jwt must have an exp claim');
    }
    // jsonwebtoken ignores crit. RFC 7515 §4.1.11 requires refusing a token
    // whose crit names an extension the recipient does not understand, and
    // this gateway understands none.
    if (verified.header.crit !== undefined) {
      throw new UnauthorizedException('jwt crit names extensions this gateway does not understand');
    }
    return true;
  }
}
