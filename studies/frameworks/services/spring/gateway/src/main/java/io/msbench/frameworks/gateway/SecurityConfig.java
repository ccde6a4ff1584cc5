package io.msbench.frameworks.gateway;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;
import javax.crypto.spec.SecretKeySpec;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.oauth2.core.OAuth2AuthenticationException;
import org.springframework.security.oauth2.jose.jws.MacAlgorithm;
import org.springframework.security.oauth2.jwt.BadJwtException;
import org.springframework.security.oauth2.jwt.JwtClaimNames;
import org.springframework.security.oauth2.jwt.JwtClaimValidator;
import org.springframework.security.oauth2.jwt.JwtValidators;
import org.springframework.security.oauth2.jwt.NimbusReactiveJwtDecoder;
import org.springframework.security.oauth2.jwt.ReactiveJwtDecoder;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.security.web.server.ServerAuthenticationEntryPoint;
import reactor.core.publisher.Mono;

/**
 * The gateway as an OAuth 2.0 resource server: /universities needs a bearer
 * JWT signed with the shared secret (HS256) for our audience; everything
 * else is open.
 */
@Configuration
@EnableWebFluxSecurity
public class SecurityConfig {
	@Bean
	SecurityWebFilterChain securityWebFilterChain(ServerHttpSecurity http) {
		ServerAuthenticationEntryPoint unauthorized = SecurityConfig::unauthorized;
		return http
				.authorizeExchange(exchange -> exchange
						.pathMatchers("/universities/**").authenticated()
						.anyExchange().permitAll())
				.oauth2ResourceServer(oauth2 -> oauth2
						.jwt(Customizer.withDefaults())
						.authenticationEntryPoint(unauthorized))
				.exceptionHandling(exceptions -> exceptions.authenticationEntryPoint(unauthorized))
				// Stateless: no session, no form, no CSRF token to check.
				.csrf(ServerHttpSecurity.CsrfSpec::disable)
				.httpBasic(ServerHttpSecurity.HttpBasicSpec::disable)
				.formLogin(ServerHttpSecurity.FormLoginSpec::disable)
				.logout(ServerHttpSecurity.LogoutSpec::disable)
				.requestCache(ServerHttpSecurity.RequestCacheSpec::disable)
				.build();
	}

	/**
	 * A compact JWS's characters: base64url segments (RFC 7515 §2: without
	 * padding) and the dots between them.
	 */
	private static final Pattern BASE64URL_JWS = Pattern.compile("[A-Za-z0-9_.-]*");

	/**
	 * A decoder for the shared secret, as Spring Security documents for MAC
	 * keys: it accepts HS256 only, so a token saying "none" or RS256 is
	 * refused; it checks exp and nbf (60 s of clock skew), that there is an
	 * exp, and the audience.
	 */
	@Bean
	ReactiveJwtDecoder jwtDecoder(@Value("${jwt.secret}") String secret, @Value("${jwt.audience}") String audience) {
		if (secret.length() < 32) {
			throw new IllegalArgumentException("JWT_SECRET has " + secret.length() + " characters; HS256 wants a key of at least 32");
		}
		NimbusReactiveJwtDecoder decoder = NimbusReactiveJwtDecoder
				.withSecretKey(new SecretKeySpec(secret.getBytes(StandardCharsets.US_ASCII), "HmacSHA256"))
				.macAlgorithm(MacAlgorithm.HS256)
				.build();
		decoder.setJwtValidator(JwtValidators.createDefaultWithValidators(
				// JwtTimestampValidator checks exp only when a token has one.
				new JwtClaimValidator<Instant>(JwtClaimNames.EXP, Objects::nonNull),
				new JwtClaimValidator<List<String>>(JwtClaimNames.AUD, aud -> aud != null && aud.contains(audience))));
		// Nimbus decodes a segment in the standard base64 alphabet (+/) as
		// well, and ignores padding in the signature, checking the signature
		// over the segments as they came: such a token would pass.
		return token -> BASE64URL_JWS.matcher(token).matches()
				? decoder.decode(token)
				: Mono.error(new BadJwtException("Malformed token: not base64url"));
	}

	/**
	 * 401 with RFC 6750's WWW-Authenticate, and the reason in a JSON body too:
	 * Spring's own entry point leaves the body empty and, for a request
	 * without a token, says nothing at all.
	 */
	private static Mono<Void> unauthorized(org.springframework.web.server.ServerWebExchange exchange,
			org.springframework.security.core.AuthenticationException ex) {
		String reason = ex instanceof OAuth2AuthenticationException oauth2 && oauth2.getError().getDescription() != null
				? oauth2.getError().getDescription()
				: "missing bearer token";
		var response = exchange.getResponse();
		response.setStatusCode(HttpStatus.UNAUTHORIZED);
		response.getHeaders().set(HttpHeaders.WWW_AUTHENTICATE,
				"Bearer error=\"invalid_token\", error_description=\"" + reason.replace("\"", "'") + "\"");
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		String body = "{\"error\":\"" + reason.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
		DataBuffer buffer = response.bufferFactory().wrap(body.getBytes(StandardCharsets.UTF_8));
		return response.writeWith(Mono.just(buffer));
	}
}
