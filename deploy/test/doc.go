// Package deploytest checks what deploy/ ships, in a module of its own so
// that Helm's and Kubernetes' Go modules never weigh on the builds of the
// module's users: the images deploy/images/build makes (their entrypoints
// run from their unpacked file systems under the images' user and answer
// their health endpoint; their user, entrypoint, ports and labels are the
// ones docs/kubernetes.md states) and the Helm chart deploy/helm/eurekagate
// (rendered with Helm's own packages, every object decoded strictly into
// the Kubernetes API's Go types, its peer source, ports and probe paths
// the ones the binaries serve, and deploy/kubernetes/ its rendering).
// .ci/run runs it: cd deploy/test && go test ./...
package deploytest
