package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"testing"
)

func parsePEM(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatal("no PEM block")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestIssuedCertificatesVerify(t *testing.T) {
	ca, err := newAuthority("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	for _, tc := range []struct {
		name  string
		leaf  leaf
		usage x509.ExtKeyUsage
		host  string // a name the certificate must serve, if a server
	}{
		{"client with groups", leaf{name: pkix.Name{CommonName: "system:node:n", Organization: []string{"system:nodes"}}}, x509.ExtKeyUsageClientAuth, ""},
		{"server by IP", leaf{name: pkix.Name{CommonName: "api"}, server: true, ips: []net.IP{net.ParseIP(nodeIP)}}, x509.ExtKeyUsageServerAuth, nodeIP},
		{"server by name", leaf{name: pkix.Name{CommonName: "api"}, server: true, dns: []string{"kubernetes.default"}}, x509.ExtKeyUsageServerAuth, "kubernetes.default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			certPEM, keyPEM, err := ca.issue(tc.leaf)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
				t.Fatalf("certificate and key do not pair: %v", err)
			}
			cert := parsePEM(t, certPEM)
			if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{tc.usage}, DNSName: tc.host}); err != nil {
				t.Fatalf("does not verify against the CA: %v", err)
			}
			if cert.Subject.CommonName != tc.leaf.name.CommonName || len(cert.Subject.Organization) != len(tc.leaf.name.Organization) {
				t.Errorf("subject %v, want %v", cert.Subject, tc.leaf.name)
			}
			if cert.IsCA {
				t.Error("a leaf certificate may sign others")
			}
		})
	}
}

func TestClientCertificateDoesNotServe(t *testing.T) {
	ca, err := newAuthority("test-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, _, err := ca.issue(leaf{name: pkix.Name{CommonName: "admin"}, ips: []net.IP{net.ParseIP(nodeIP)}})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	if _, err := parsePEM(t, certPEM).Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a client certificate verifies as a server's")
	}
}

func TestServiceAccountKeysPair(t *testing.T) {
	private, public, err := serviceAccountKeys()
	if err != nil {
		t.Fatal(err)
	}
	privBlock, _ := pem.Decode(private)
	pubBlock, _ := pem.Decode(public)
	if privBlock == nil || pubBlock == nil {
		t.Fatal("not PEM")
	}
	key, err := x509.ParsePKCS1PrivateKey(privBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.ParsePKIXPublicKey(pubBlock.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.PublicKey.Equal(pub) {
		t.Error("the public key is not the private key's")
	}
}
