package demo;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.client.RestClient;

/**
 * A Spring Boot service with the Eureka client, as users run it: it
 * registers, heartbeats and fetches; /hello answers with its instance id,
 * and /call/{service} calls another service by name through Spring Cloud
 * LoadBalancer.
 */
@SpringBootApplication
@RestController
public class ClientApp {
    @Value("${eureka.instance.instance-id}")
    private String instanceId;

    private final RestClient lb;

    public ClientApp(@LoadBalanced RestClient.Builder builder) {
        this.lb = builder.build();
    }

    /**
     * The load-balanced builder, apart from the controller that uses it,
     * and a plain one beside it as the primary: Spring Cloud 2025.1's
     * Eureka client builds its own RestClient from the RestClient.Builder
     * bean, and a load-balanced one would send it to look itself up.
     */
    @Configuration
    static class LoadBalancing {
        @Bean
        @LoadBalanced
        RestClient.Builder loadBalanced() {
            return RestClient.builder();
        }

        @Bean
        @Primary
        RestClient.Builder plain() {
            return RestClient.builder();
        }
    }

    @GetMapping("/hello")
    String hello() {
        return instanceId;
    }

    @GetMapping("/call/{service}")
    String call(@PathVariable String service) {
        return lb.get().uri("http://" + service + "/hello").retrieve().body(String.class);
    }

    public static void main(String[] args) {
        SpringApplication.run(ClientApp.class, args);
    }
}
