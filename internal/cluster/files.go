package cluster

import (
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
)

// writeFiles writes the cluster's certificates, kubeconfigs and component
// configurations, and returns the administrator's credentials.
func writeFiles(l layout, forwardPort int) (adminCredentials, error) {
	ca, err := newAuthority("msbench-cluster-ca")
	if err != nil {
		return adminCredentials{}, err
	}
	if err := writeSecret(l.path("pki"), "ca.crt", ca.pem); err != nil {
		return adminCredentials{}, err
	}
	saKey, saPub, err := serviceAccountKeys()
	if err != nil {
		return adminCredentials{}, err
	}
	if err := writeSecret(l.path("pki"), "sa.key", saKey); err != nil {
		return adminCredentials{}, err
	}
	if err := writeSecret(l.path("pki"), "sa.pub", saPub); err != nil {
		return adminCredentials{}, err
	}
	certs := map[string]leaf{
		"apiserver": {name: pkix.Name{CommonName: "kube-apiserver"}, server: true,
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			ips: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(nodeIP), net.ParseIP(apiServiceIP)}},
		"apiserver-kubelet":  {name: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}}},
		"admin":              {name: pkix.Name{CommonName: "msbench-admin", Organization: []string{"system:masters"}}},
		"controller-manager": {name: pkix.Name{CommonName: "system:kube-controller-manager"}},
		"scheduler":          {name: pkix.Name{CommonName: "system:kube-scheduler"}},
		// The name the default system:node-proxier binding grants.
		"kube-proxy": {name: pkix.Name{CommonName: "system:kube-proxy"}},
		"kubelet":    {name: pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}}},
	}
	var admin adminCredentials
	for name, lf := range certs {
		cert, key, err := ca.issue(lf)
		if err != nil {
			return adminCredentials{}, err
		}
		if err := writeSecret(l.path("pki"), name+".crt", cert); err != nil {
			return adminCredentials{}, err
		}
		if err := writeSecret(l.path("pki"), name+".key", key); err != nil {
			return adminCredentials{}, err
		}
		if name == "apiserver" || name == "apiserver-kubelet" {
			continue
		}
		if err := writeSecret(l.path("kubeconfig"), name+".yaml", kubeconfig(l.apiserverURL(), ca.pem, cert, key, lf.name.CommonName)); err != nil {
			return adminCredentials{}, err
		}
		if name == "admin" {
			admin = adminCredentials{ca: ca.pem, cert: cert, key: key}
			if err := writeSecret(l.dir, "kubeconfig.yaml", kubeconfig(l.forwardedURL(forwardPort), ca.pem, cert, key, lf.name.CommonName)); err != nil {
				return adminCredentials{}, err
			}
		}
	}
	for path, data := range map[string][]byte{
		l.containerdConfigFile():                  containerdConfig(l),
		l.kubeletConfigFile():                     kubeletConfig(l),
		l.proxyConfigFile():                       proxyConfig(l),
		l.cniConfigDir() + "/10-msbench.conflist": cniConfig(l),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return adminCredentials{}, fmt.Errorf("cluster configuration: %w", err)
		}
	}
	return admin, nil
}
