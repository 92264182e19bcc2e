// Package fakeapi serves, over plain HTTP, an API server that holds none of
// the objects a process watches: every list is empty, and every watch stays
// open without events until the client goes. A process's wiring (clients,
// informers, servers, shutdown) can run against it in a unit test, without
// the etcd and kube-apiserver that test/k8s/k8stest starts.
package fakeapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// Empty starts the server until t ends. kinds maps each resource a client
// may ask for (pods, foreignclusterconnections) to its kind (Pod,
// ForeignClusterConnection); any other request is answered 404.
func Empty(t testing.TB, kinds map[string]string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiVersion, resource, ok := parse(r.URL.Path)
		kind := kinds[resource]
		if !ok || kind == "" || r.Method != http.MethodGet {
			http.Error(w, "not served by fakeapi", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") != "true" {
			fmt.Fprintf(w, `{"apiVersion":%q,"kind":"%sList","metadata":{"resourceVersion":"1"},"items":[]}`, apiVersion, kind)
			return
		}
		// A streamed list (sendInitialEvents) ends its initial events,
		// none here, with this bookmark.
		if r.URL.Query().Get("sendInitialEvents") == "true" {
			fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"apiVersion":%q,"kind":%q,"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", apiVersion, kind)
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	return srv
}

// parse splits /api/v1/<resource>, /apis/<group>/<version>/<resource> and
// their namespaced forms (.../namespaces/<ns>/<resource>).
func parse(path string) (apiVersion, resource string, ok bool) {
	p := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(p) >= 3 && p[0] == "api":
		apiVersion, p = p[1], p[2:]
	case len(p) >= 4 && p[0] == "apis":
		apiVersion, p = p[1]+"/"+p[2], p[3:]
	default:
		return "", "", false
	}
	if len(p) == 3 && p[0] == "namespaces" {
		p = p[2:]
	}
	if len(p) != 1 {
		return "", "", false
	}
	return apiVersion, p[0], true
}

// Kubeconfig writes a kubeconfig for the server at url into a file under
// t's temporary directory and returns its path.
func Kubeconfig(t testing.TB, url string) string {
	t.Helper()
	path := t.TempDir() + "/kubeconfig"
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, url)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
