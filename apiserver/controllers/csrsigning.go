package controllers

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/devplane/devplane/apiserver/builtin"
)

// CSRSigner signs a certificate for req with the given usages, valid for
// ttl: in devplane, the cluster CA that authenticates client certificates.
type CSRSigner func(req *x509.CertificateRequest, keyUsage x509.KeyUsage, extKeyUsage []x509.ExtKeyUsage, ttl time.Duration) ([]byte, error)

// maxCSRDuration is kube-controller-manager's --cluster-signing-duration
// default: no certificate signed for a request lives longer.
const maxCSRDuration = 365 * 24 * time.Hour

// csrSigning issues certificates for approved requests to kube's built-in
// signers, as kube-controller-manager's csrsigning controllers do with the
// cluster CA: kubernetes.io/kube-apiserver-client (any subject; client
// usages), kubernetes.io/kube-apiserver-client-kubelet and
// kubernetes.io/kubelet-serving (a node's identity and exactly a
// kubelet's usages). A request its signer refuses gets a Failed condition
// (reason SignerValidationFailure) instead; requests to other signers are
// left to their own.
type csrSigning struct {
	client kubernetes.Interface
	reads  reads
	sign   CSRSigner
	logger *slog.Logger
	synced atomic.Bool
}

// NewCSRSigningController signs approved CertificateSigningRequests for
// kube's built-in signers with sign.
func NewCSRSigningController(cfg *rest.Config, local Local, sign CSRSigner, logger *slog.Logger) (Controller, error) {
	c, err := clientsFor(cfg, local, "csrsigning")
	if err != nil {
		return nil, err
	}
	return &csrSigning{client: c.client, reads: c.reads, sign: sign, logger: loggerOr(logger, "csrsigning")}, nil
}

func (c *csrSigning) Name() string    { return "csrsigning" }
func (c *csrSigning) HasSynced() bool { return c.synced.Load() }

var csrGVR = schema.GroupVersionResource{Group: certificatesv1.GroupName, Version: "v1", Resource: "certificatesigningrequests"}

func (c *csrSigning) Run(ctx context.Context) error {
	defer c.synced.Store(false)
	queue := newQueue[string]("csrsigning", 10*time.Millisecond, 10*time.Second)
	informer := cache.NewSharedIndexInformer(c.reads.typedIn(csrGVR, c.client.CertificatesV1().RESTClient(), nil), &certificatesv1.CertificateSigningRequest{}, 0, cache.Indexers{})
	enqueue := func(obj any) {
		if csr, ok := obj.(*certificatesv1.CertificateSigningRequest); ok && awaitsSigning(csr) {
			queue.Add(csr.Name)
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		return err
	}
	synced, stopped := runInformers(ctx, informer)
	defer stopped()
	if !synced {
		queue.ShutDown()
		return nil
	}
	c.synced.Store(true)
	runWorkers(ctx, queue, 1, c.logger, func(ctx context.Context, name string) error {
		obj, exists, err := informer.GetIndexer().GetByKey(name)
		if err != nil || !exists {
			return err
		}
		csr := obj.(*certificatesv1.CertificateSigningRequest)
		if !awaitsSigning(csr) {
			return nil
		}
		err = c.handle(ctx, csr.DeepCopy())
		if apierrors.IsNotFound(err) {
			return nil // deleted meanwhile
		}
		return err
	})
	return nil
}

// builtinSigners are the signers this controller issues for.
var builtinSigners = []string{
	certificatesv1.KubeAPIServerClientSignerName,
	certificatesv1.KubeAPIServerClientKubeletSignerName,
	certificatesv1.KubeletServingSignerName,
}

// awaitsSigning: approved, not failed, no certificate yet, for one of ours.
func awaitsSigning(csr *certificatesv1.CertificateSigningRequest) bool {
	if len(csr.Status.Certificate) > 0 || !slices.Contains(builtinSigners, csr.Spec.SignerName) {
		return false
	}
	approved := false
	for _, cond := range csr.Status.Conditions {
		switch {
		case cond.Status != corev1.ConditionTrue:
		case cond.Type == certificatesv1.CertificateDenied, cond.Type == certificatesv1.CertificateFailed:
			return false
		case cond.Type == certificatesv1.CertificateApproved:
			approved = true
		}
	}
	return approved
}

func (c *csrSigning) handle(ctx context.Context, csr *certificatesv1.CertificateSigningRequest) error {
	block, _ := pem.Decode(csr.Spec.Request)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return c.fail(ctx, csr, errors.New("PEM block type must be CERTIFICATE REQUEST"))
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return c.fail(ctx, csr, fmt.Errorf("unable to parse csr %q: %w", csr.Name, err))
	}
	if err := signerAccepts(csr.Spec.SignerName, req, csr.Spec.Usages); err != nil {
		return c.fail(ctx, csr, err)
	}
	keyUsage, extKeyUsage, err := x509Usages(csr.Spec.Usages)
	if err != nil {
		return c.fail(ctx, csr, err)
	}
	cert, err := c.sign(req, keyUsage, extKeyUsage, csrDuration(csr.Spec.ExpirationSeconds))
	if err != nil {
		return fmt.Errorf("signing csr %q: %w", csr.Name, err)
	}
	csr.Status.Certificate = cert
	_, err = c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return errRequeue // the informer brings the newer one
	}
	return err
}

// fail records why the signer refused the request.
func (c *csrSigning) fail(ctx context.Context, csr *certificatesv1.CertificateSigningRequest, why error) error {
	csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type:           certificatesv1.CertificateFailed,
		Status:         corev1.ConditionTrue,
		Reason:         "SignerValidationFailure",
		Message:        why.Error(),
		LastUpdateTime: metav1.Now(),
	})
	_, err := c.client.CertificatesV1().CertificateSigningRequests().UpdateStatus(ctx, csr, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		return errRequeue
	}
	return err
}

// csrDuration is what the request asked for within kube's bounds: at most
// the signing duration, at least ten minutes (twice the backdate).
func csrDuration(expirationSeconds *int32) time.Duration {
	if expirationSeconds == nil {
		return maxCSRDuration
	}
	return min(max(time.Duration(*expirationSeconds)*time.Second, 10*time.Minute), maxCSRDuration)
}

// signerAccepts applies each built-in signer's rules to the request.
func signerAccepts(signer string, req *x509.CertificateRequest, usages []certificatesv1.KeyUsage) error {
	switch signer {
	case certificatesv1.KubeAPIServerClientSignerName:
		hasClientAuth := false
		for _, u := range usages {
			switch u {
			case certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment:
			case certificatesv1.UsageClientAuth:
				hasClientAuth = true
			default:
				return fmt.Errorf("invalid usage for client certificate: %s", u)
			}
		}
		if !hasClientAuth {
			return fmt.Errorf("missing required usage for client certificate: %s", certificatesv1.UsageClientAuth)
		}
		return nil
	case certificatesv1.KubeAPIServerClientKubeletSignerName:
		if err := nodeSubject(req); err != nil {
			return err
		}
		switch {
		case len(req.DNSNames) > 0:
			return errors.New("DNS subjectAltNames are not allowed")
		case len(req.EmailAddresses) > 0:
			return errors.New("Email subjectAltNames are not allowed")
		case len(req.IPAddresses) > 0:
			return errors.New("IP subjectAltNames are not allowed")
		case len(req.URIs) > 0:
			return errors.New("URI subjectAltNames are not allowed")
		}
		if err := nodeCommonName(req); err != nil {
			return err
		}
		return exactUsages(usages, certificatesv1.UsageClientAuth)
	case certificatesv1.KubeletServingSignerName:
		if err := nodeSubject(req); err != nil {
			return err
		}
		switch {
		case len(req.DNSNames) == 0 && len(req.IPAddresses) == 0:
			return errors.New("DNS or IP subjectAltName is required")
		case len(req.EmailAddresses) > 0:
			return errors.New("Email subjectAltNames are not allowed")
		case len(req.URIs) > 0:
			return errors.New("URI subjectAltNames are not allowed")
		}
		if err := exactUsages(usages, certificatesv1.UsageServerAuth); err != nil {
			return err
		}
		return nodeCommonName(req)
	}
	return fmt.Errorf("unrecognized signerName: %q", signer)
}

func nodeSubject(req *x509.CertificateRequest) error {
	if !slices.Equal(req.Subject.Organization, []string{"system:nodes"}) {
		return errors.New("subject organization is not system:nodes")
	}
	return nil
}

func nodeCommonName(req *x509.CertificateRequest) error {
	if !strings.HasPrefix(req.Subject.CommonName, "system:node:") {
		return errors.New("subject common name does not begin with system:node:")
	}
	return nil
}

// exactUsages: a kubelet's certificate is for digital signature and auth
// (client or server), with key encipherment allowed (RSA keys), no more.
func exactUsages(usages []certificatesv1.KeyUsage, auth certificatesv1.KeyUsage) error {
	want := []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, auth}
	got := map[certificatesv1.KeyUsage]bool{}
	for _, u := range usages {
		got[u] = true
	}
	withRSA := len(got) == 3 && got[want[0]] && got[want[1]] && got[want[2]]
	withoutRSA := len(got) == 2 && got[want[0]] && got[want[2]]
	if !withRSA && !withoutRSA {
		names := []string{string(want[0]), string(want[1]), string(want[2])}
		slices.Sort(names)
		return fmt.Errorf("usages did not match [%s]", strings.Join(names, " "))
	}
	return nil
}

// x509Usages maps a request's usages onto a certificate's, as kube's
// signer does.
func x509Usages(usages []certificatesv1.KeyUsage) (x509.KeyUsage, []x509.ExtKeyUsage, error) {
	var keyUsage x509.KeyUsage
	var ext []x509.ExtKeyUsage
	for _, u := range usages {
		meaning, ok := builtin.CSRUsages[u]
		switch {
		case !ok:
			return 0, nil, fmt.Errorf("unknown key usage: %s", u)
		case !meaning.Extended:
			keyUsage |= meaning.Key
		case !slices.Contains(ext, meaning.Ext):
			ext = append(ext, meaning.Ext)
		}
	}
	return keyUsage, ext, nil
}
