package builtin

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	storagemigrationv1 "k8s.io/api/storagemigration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// Scheme knows every type devplane serves or accepts as a request body:
// all built-in groups, meta.k8s.io (Table, PartialObjectMetadata, WatchEvent,
// Status), autoscaling/v1 Scale, policy/v1 Eviction and the
// authentication/authorization review types.
var Scheme = newScheme()

// Codecs serializes Scheme's types as JSON, YAML and protobuf. Objects are
// stored in the version they are served in, so callers usually want
// Codecs.WithoutConversion().
var Codecs = serializer.NewCodecFactory(Scheme)

// ParameterCodec decodes query parameters (ListOptions, GetOptions...).
var ParameterCodec = runtime.NewParameterCodec(Scheme)

// AddAPIGroups registers the k8s.io/api group versions devplane serves: one
// list for Scheme and for the OpenAPI definitions' group-version-kinds.
func AddAPIGroups(scheme *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme,
		appsv1.AddToScheme,
		batchv1.AddToScheme,
		autoscalingv1.AddToScheme,
		autoscalingv2.AddToScheme,
		coordinationv1.AddToScheme,
		eventsv1.AddToScheme,
		discoveryv1.AddToScheme,
		networkingv1.AddToScheme,
		policyv1.AddToScheme,
		rbacv1.AddToScheme,
		storagev1.AddToScheme,
		schedulingv1.AddToScheme,
		nodev1.AddToScheme,
		admissionregistrationv1.AddToScheme,
		certificatesv1.AddToScheme,
		flowcontrolv1.AddToScheme,
		resourcev1.AddToScheme,
		storagemigrationv1.AddToScheme,
		authenticationv1.AddToScheme,
		authorizationv1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			return err
		}
	}
	return nil
}

func newScheme() *runtime.Scheme {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{AddAPIGroups, metav1.AddMetaToScheme, metav1beta1.AddMetaToScheme} {
		utilruntime.Must(add(scheme))
	}
	// WatchEvent, Status and the option types, as the core group and
	// meta.k8s.io/v1 (what clients use when they send DeleteOptions etc.).
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	return scheme
}
