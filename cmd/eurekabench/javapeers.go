package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// javaJars are the executable jars of the interop suite's Java peers
// (interop/java): the Spring Cloud Netflix Eureka Server, a Spring Boot
// service with the Eureka client, and Spring Cloud Gateway with the
// discovery locator.
type javaJars struct{ server, client, gateway string }

// buildJars copies the interop projects into dir and builds them there
// with Maven, so that the run leaves nothing in the repository.
func buildJars(ctx context.Context, dir string) (javaJars, error) {
	var j javaJars
	var err error
	for _, p := range []struct {
		name string
		jar  *string
	}{{"server", &j.server}, {"client", &j.client}, {"gateway", &j.gateway}} {
		if *p.jar, err = buildJar(ctx, dir, p.name); err != nil {
			return j, err
		}
	}
	return j, nil
}

// buildJar copies the interop project interop/java/<project> into dir and
// builds it there with Maven, and returns its executable jar.
func buildJar(ctx context.Context, dir, project string) (string, error) {
	outp, err := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %v", err)
	}
	to := filepath.Join(dir, project)
	if outp, err := exec.CommandContext(ctx, "cp", "-r", filepath.Join(strings.TrimSpace(string(outp)), "interop", "java", project), to).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copying %s: %v\n%s", project, err, outp)
	}
	os.RemoveAll(filepath.Join(to, "target"))
	mvn := exec.CommandContext(ctx, "mvn", "-B", "-ntp", "-q", "-f", "pom.xml", "package", "-DskipTests")
	mvn.Dir = to
	if outp, err := mvn.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mvn package in interop/java/%s: %v\n%s", project, err, outp)
	}
	return filepath.Join(to, "target", "interop-"+project+".jar"), nil
}

// jvmFlags are the JVM settings of every Java process of the study, the
// ones a user would run with: G1, which JDK 17 picks on this machine
// anyway (two CPUs and more than 1792 MB make it a "server class"
// machine), the full tiered JIT (the interop tests' C1-only start-up
// shortcut would slow every request), and a fixed heap ceiling, as a
// container would set, of 2 GB for the server (which holds 50,000
// instances and its response caches with room) and 1 GB for the gateway
// and the service.
func jvmFlags(heap string) []string {
	return []string{"-XX:+UseG1GC", "-Xmx" + heap, "-Xss512k"}
}

// springQuiet are the Spring settings every Java process gets: no banner,
// warnings only, and the lines the study waits for.
var springQuiet = []string{"--spring.main.banner-mode=off", "--logging.level.root=WARN",
	"--logging.level.demo=INFO", // "Started ServerApp in ..." is the main class's
	"--logging.level.org.springframework.cloud.netflix.eureka.server=INFO"}

var springStarted = regexp.MustCompile(`Started \w+App in [0-9.]+ seconds`)

// startJava runs jar with heap as the JVM's heap ceiling and the Spring
// arguments args, and waits until Spring says it has started.
func startJava(dir, name, jar, heap string, args ...string) (*node, error) {
	all := append(append(append(jvmFlags(heap), "-jar", jar), springQuiet...), args...)
	n, err := startNode(dir, name, nil, "java", all...)
	if err != nil {
		return nil, err
	}
	if err := n.await(springStarted, 3*time.Minute); err != nil {
		n.stop()
		return nil, err
	}
	return n, nil
}

// startJavaServer runs the Spring Cloud Eureka Server on addr (host:port)
// with its production defaults, and the settings extra. Alone (no peers)
// it is the standalone server of Spring's documentation: its own URL as
// the default zone, neither registering with it nor fetching from it.
func startJavaServer(dir, name, jar, addr string, peers []string, extra ...string) (*node, error) {
	host, port, _ := strings.Cut(addr, ":")
	self := "http://" + addr + "/eureka/"
	args := []string{"--server.port=" + port, "--server.address=" + host,
		"--spring.application.name=eureka-java", "--eureka.instance.hostname=" + host,
		"--eureka.instance.instance-id=" + host + ":eureka-java:" + port}
	if len(peers) == 0 {
		args = append(args, "--eureka.client.service-url.defaultZone="+self,
			"--eureka.client.register-with-eureka=false", "--eureka.client.fetch-registry=false")
	} else {
		args = append(args, "--eureka.client.service-url.defaultZone="+strings.Join(peers, ","),
			"--eureka.server.my-url="+self)
	}
	n, err := startJava(dir, name, jar, "2g", append(args, extra...)...)
	if err != nil {
		return nil, err
	}
	n.registry = addr
	if err := n.await(regexp.MustCompile(`Started Eureka Server`), 2*time.Minute); err != nil {
		n.stop()
		return nil, err
	}
	return n, nil
}

// fullGC asks the JVM at pid for a full collection (jcmd <pid> GC.run,
// System.gc(): G1 collects the whole heap and gives back what its heap
// sizing no longer needs).
func fullGC(pid int) error {
	if outp, err := exec.Command("jcmd", strconv.Itoa(pid), "GC.run").CombinedOutput(); err != nil {
		return fmt.Errorf("jcmd GC.run: %v\n%s", err, outp)
	}
	return nil
}
