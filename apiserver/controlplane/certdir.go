package controlplane

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/devplane/devplane/certs"
)

// certDirLockFile is created exclusively while one replica checks or writes
// a shared certificate directory, so two replicas starting together on an
// empty directory do not each create their own CA.
const certDirLockFile = ".devplane-certs.lock"

// certDirLockStale is how old a lock file may get before it is taken to be
// left behind by a replica that died while holding it: certs.Ensure takes
// milliseconds.
const certDirLockStale = 30 * time.Second

// lockCertDir waits (up to a minute) to hold dir's lock file and returns
// the function that releases it.
func lockCertDir(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("certificates: %w", err)
	}
	path := filepath.Join(dir, certDirLockFile)
	deadline := time.Now().Add(time.Minute)
	for {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
			_ = f.Close()
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("certificates: locking %s: %w", dir, err)
		}
		if st, err := os.Stat(path); err == nil && time.Since(st.ModTime()) > certDirLockStale {
			_ = os.Remove(path)
			continue
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("certificates: %s is still locked after a minute: remove it if no devplane is starting", path)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withExistingSANs adds the names and addresses the serving certificate in
// dir already covers, so that replicas sharing dir with different
// addresses only ever widen it and never keep replacing each other's.
func withExistingSANs(dir string, dnsNames []string, ips []net.IP) ([]string, []net.IP) {
	body, err := os.ReadFile(filepath.Join(dir, certs.ServingCertFile))
	if err != nil {
		return dnsNames, ips
	}
	block, _ := pem.Decode(body)
	if block == nil {
		return dnsNames, ips
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return dnsNames, ips
	}
	return append(append([]string{}, dnsNames...), cert.DNSNames...), append(append([]net.IP{}, ips...), cert.IPAddresses...)
}
