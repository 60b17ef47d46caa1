// Package aggregator is devplane's kube-aggregator: it serves the
// apiregistration.k8s.io APIService resource, keeps an APIService for every
// group/version devplane serves itself, and proxies the group/versions of
// registered extension API servers to their endpoints (a laptop has no
// service network, so never through a cluster IP), merging their discovery
// with devplane's own.
package aggregator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/devplane/devplane/apiserver/storage"
)

// Scheme knows apiregistration.k8s.io/v1 and meta.k8s.io (Table,
// PartialObjectMetadata, Status, WatchEvent, the option types).
var Scheme = newScheme()

// Codecs serializes Scheme's types as JSON, YAML and protobuf.
var Codecs = serializer.NewCodecFactory(Scheme)

// GroupVersion is the served apiregistration.k8s.io version.
var GroupVersion = apiregv1.SchemeGroupVersion

// StoragePrefix is where APIServices live in etcd, as in kube.
const StoragePrefix = "/registry/apiregistration.k8s.io/apiservices"

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(apiregv1.AddToScheme(s))
	utilruntime.Must(metav1.AddMetaToScheme(s))
	utilruntime.Must(metav1beta1.AddMetaToScheme(s))
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(s, metav1.SchemeGroupVersion)
	return s
}

// StorageConfig is the APIService storage: protobuf in etcd, as kube
// stores it, so an etcd written by either can be read by the other.
func StorageConfig() storage.Config {
	pb := protobuf.NewSerializer(Scheme, Scheme)
	return storage.Config{
		Resource:       GroupVersion.WithResource("apiservices").GroupResource(),
		Codec:          Codecs.CodecForVersions(pb, pb, GroupVersion, GroupVersion),
		NewFunc:        func() runtime.Object { return &apiregv1.APIService{} },
		NewListFunc:    func() runtime.Object { return &apiregv1.APIServiceList{} },
		ResourcePrefix: StoragePrefix,
		GetAttrs:       getAttrs,
	}
}
