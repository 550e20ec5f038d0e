package demo;

import org.springframework.cloud.gateway.filter.ratelimit.KeyResolver;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import reactor.core.publisher.Mono;

/**
 * The ratelimit profile's KeyResolver (see application-ratelimit.yml):
 * the id of the request's route, so that each app's discovery route
 * ("ReactiveCompositeDiscoveryClient_SVC") is one bucket, as a limit
 * {@code key: app} of our gateways is. Being the only KeyResolver bean, it
 * is the one RequestRateLimiter uses when its filter names none (Spring
 * Cloud Gateway's principal-name resolver is made only without one), so
 * the filter needs no {@code key-resolver} SpEL argument.
 */
@Configuration
@Profile("ratelimit")
public class RateLimitConfig {
    @Bean
    KeyResolver routeKeyResolver() {
        return exchange -> {
            Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
            return Mono.justOrEmpty(route == null ? null : route.getId());
        };
    }
}
