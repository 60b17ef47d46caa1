package workloads

// The certificate sources of projected volumes, as the kubelet fills them:
// ClusterTrustBundles' trust anchors (by name, or by signer and label
// selector), and pod certificates, for which the kubelet makes a key,
// asks the signer through a PodCertificateRequest and waits until it is
// issued.

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sort"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// trustBundleFiles is a ClusterTrustBundle source's file: the trust
// anchors of the bundle named, or of every bundle of the signer the label
// selector matches (a nil selector matches none), each certificate once.
func (k *kubelet) trustBundleFiles(ctx context.Context, src *corev1.ClusterTrustBundleProjection) (map[string][]byte, error) {
	optional := src.Optional != nil && *src.Optional
	var pems []string
	switch {
	case src.Name != nil:
		ctb, err := k.trustBundle(ctx, *src.Name)
		if apierrors.IsNotFound(err) && optional {
			return map[string][]byte{src.Path: {}}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("while getting ClusterTrustBundle: %w", err)
		}
		pems = []string{ctb.Spec.TrustBundle}
	case src.SignerName != nil:
		if src.LabelSelector != nil {
			selector, err := metav1.LabelSelectorAsSelector(src.LabelSelector)
			if err != nil {
				return nil, fmt.Errorf("while parsing label selector: %w", err)
			}
			list, err := k.api.CertificatesV1().ClusterTrustBundles().List(ctx, metav1.ListOptions{ResourceVersion: "0", LabelSelector: selector.String()})
			if err != nil {
				return nil, fmt.Errorf("while listing ClusterTrustBundles matching label selector %v: %w", src.LabelSelector, err)
			}
			for _, ctb := range list.Items {
				if ctb.Spec.SignerName == *src.SignerName {
					pems = append(pems, ctb.Spec.TrustBundle)
				}
			}
		}
		if len(pems) == 0 {
			if optional {
				return map[string][]byte{src.Path: {}}, nil
			}
			return nil, errors.New("combination of signerName and labelSelector matched zero ClusterTrustBundles")
		}
	default:
		return nil, errors.New("ClusterTrustBundle projection requires either name or signerName to be set")
	}
	return map[string][]byte{src.Path: normalizeTrustAnchors(pems)}, nil
}

// normalizeTrustAnchors is the certificates of the bundles, each once, as
// PEM blocks without headers or text between them (in a sorted order;
// kube's kubelet shuffles it once per start).
func normalizeTrustAnchors(bundles []string) []byte {
	seen := map[string]bool{}
	var ders []string
	for _, b := range bundles {
		rest := []byte(b)
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if der := string(block.Bytes); !seen[der] {
				seen[der] = true
				ders = append(ders, der)
			}
		}
	}
	sort.Strings(ders)
	var out bytes.Buffer
	for _, der := range ders {
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: []byte(der)})
	}
	return out.Bytes()
}

// cleanChain is a certificate chain's PEM blocks in their order (the leaf
// first), without headers or text between them.
func cleanChain(chain string) []byte {
	var out bytes.Buffer
	rest := []byte(chain)
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			return out.Bytes()
		}
		_ = pem.Encode(&out, &pem.Block{Type: block.Type, Bytes: block.Bytes})
	}
}

// podCertificate is a pod certificate source's key and the request made
// for it.
type podCertificate struct {
	keyPEM  []byte
	request string // the PodCertificateRequest's name
}

func podCertificateKey(uid types.UID, volume string, source int) string {
	return fmt.Sprintf("%s/%s/%d", uid, volume, source)
}

// podCertificateFiles are a pod certificate source's files once its
// request is issued: the key and chain together, and each on its own if
// asked. Until then it says what it waits for.
func (k *kubelet) podCertificateFiles(ctx context.Context, node *simNode, pod *corev1.Pod, volume string, source int, src *corev1.PodCertificateProjection) (map[string][]byte, error) {
	key := podCertificateKey(pod.UID, volume, source)
	k.mu.Lock()
	pc := k.certificates[key]
	k.mu.Unlock()
	if pc == nil {
		created, err := k.requestPodCertificate(ctx, node, pod, src)
		if err != nil {
			return nil, err
		}
		k.mu.Lock()
		if k.certificates == nil {
			k.certificates = map[string]*podCertificate{}
		}
		k.certificates[key] = created
		k.mu.Unlock()
		return nil, errors.New("credential bundle is not issued yet")
	}
	pcr, err := k.api.CertificatesV1().PodCertificateRequests(pod.Namespace).Get(ctx, pc.request, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("while getting PodCertificateRequest %s: %w", pc.request, err)
	}
	for _, c := range pcr.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			continue
		}
		switch c.Type {
		case certificatesv1.PodCertificateRequestConditionTypeDenied:
			return nil, fmt.Errorf("PodCertificateRequest was permanently denied: reason=%q message=%q", c.Reason, c.Message)
		case certificatesv1.PodCertificateRequestConditionTypeFailed:
			return nil, fmt.Errorf("PodCertificateRequest was permanently failed: reason=%q message=%q", c.Reason, c.Message)
		}
	}
	if pcr.Status.CertificateChain == "" {
		return nil, errors.New("credential bundle is not issued yet")
	}
	chain := cleanChain(pcr.Status.CertificateChain)
	files := map[string][]byte{}
	if src.CredentialBundlePath != "" {
		files[src.CredentialBundlePath] = append(append([]byte{}, pc.keyPEM...), chain...)
	}
	if src.KeyPath != "" {
		files[src.KeyPath] = pc.keyPEM
	}
	if src.CertificateChainPath != "" {
		files[src.CertificateChainPath] = chain
	}
	return files, nil
}

// requestPodCertificate makes a key of the type asked for and the
// PodCertificateRequest for it: the pod, its service account and node,
// the public key proven by a PKCS#10 request it signed, owned by the pod.
func (k *kubelet) requestPodCertificate(ctx context.Context, node *simNode, pod *corev1.Pod, src *corev1.PodCertificateProjection) (*podCertificate, error) {
	priv, err := newPrivateKey(src.KeyType)
	if err != nil {
		return nil, err
	}
	proof, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, priv)
	if err != nil {
		return nil, fmt.Errorf("while generating stub PKCS#10 request: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, err
	}
	saName := pod.Spec.ServiceAccountName
	if saName == "" {
		saName = "default"
	}
	sa, err := k.api.CoreV1().ServiceAccounts(pod.Namespace).Get(ctx, saName, metav1.GetOptions{ResourceVersion: "0"})
	if err != nil {
		return nil, fmt.Errorf("while getting service account %s: %w", saName, err)
	}
	node.mu.Lock()
	nodeUID := node.uid
	node.mu.Unlock()
	req := &certificatesv1.PodCertificateRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "req-", Namespace: pod.Namespace,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}}},
		Spec: certificatesv1.PodCertificateRequestSpec{
			SignerName: src.SignerName,
			PodName:    pod.Name, PodUID: pod.UID,
			ServiceAccountName: sa.Name, ServiceAccountUID: sa.UID,
			NodeName: types.NodeName(node.name), NodeUID: types.UID(nodeUID),
			MaxExpirationSeconds:      src.MaxExpirationSeconds,
			StubPKCS10Request:         proof,
			UnverifiedUserAnnotations: src.UserAnnotations,
		},
	}
	// As the node: the API checks that the pod is bound to it.
	created, err := node.client.CertificatesV1().PodCertificateRequests(pod.Namespace).Create(ctx, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("while creating PodCertificateRequest: %w", err)
	}
	return &podCertificate{keyPEM: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), request: created.Name}, nil
}

// newPrivateKey makes a key of one of the PodCertificateProjection's key
// types.
func newPrivateKey(keyType string) (crypto.Signer, error) {
	switch keyType {
	case "RSA3072":
		return rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		return rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		return ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		return ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		return priv, err
	}
	return nil, fmt.Errorf("unknown key type %q", keyType)
}
