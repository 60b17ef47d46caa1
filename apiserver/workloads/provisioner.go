package workloads

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// The default StorageClass and its provisioner: claims of the class get a
// simulated volume (a hostPath PersistentVolume nothing mounts), which
// kube's persistent-volume binder then binds, as with any external
// (CSI) provisioner.
const (
	DefaultStorageClass = "standard"
	Provisioner         = "devplane.dev/simulated"

	annStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	annBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	annProvisionedBy          = "pv.kubernetes.io/provisioned-by"
	annDefaultClass           = "storageclass.kubernetes.io/is-default-class"
)

type provisioner struct {
	m        *Machinery
	client   kubernetes.Interface
	claims   corelisters.PersistentVolumeClaimLister
	volumes  corelisters.PersistentVolumeLister
	classes  storagelisters.StorageClassLister
	queue    workqueue.TypedRateLimitingInterface[string]
	recorder record.EventRecorder
}

func newProvisioner(m *Machinery, client kubernetes.Interface, f *localFactory, recorder record.EventRecorder) (*provisioner, error) {
	p := &provisioner{m: m, client: client, recorder: recorder,
		claims:  f.Core().V1().PersistentVolumeClaims().Lister(),
		volumes: f.Core().V1().PersistentVolumes().Lister(),
		classes: f.Storage().V1().StorageClasses().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](10*time.Millisecond, 5*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "simulated-provisioner"}),
	}
	onClaim := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add("claim/" + key)
		}
	}
	if _, err := f.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onClaim, UpdateFunc: func(_, obj any) { onClaim(obj) },
	}); err != nil {
		return nil, err
	}
	onVolume := func(obj any) {
		if pv, ok := obj.(*corev1.PersistentVolume); ok && pv.Status.Phase == corev1.VolumeReleased {
			p.queue.Add("volume/" + pv.Name)
		}
	}
	if _, err := f.Core().V1().PersistentVolumes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: onVolume, UpdateFunc: func(_, obj any) { onVolume(obj) },
	}); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *provisioner) run(ctx context.Context) {
	if err := retry(ctx, func() error { return p.ensureDefaultClass(ctx) }); err != nil && ctx.Err() == nil {
		p.m.logger.Warn("creating the default StorageClass", "err", err)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				key, shutdown := p.queue.Get()
				if shutdown {
					return
				}
				if err := p.sync(ctx, key); err != nil && ctx.Err() == nil {
					p.queue.AddRateLimited(key)
				} else {
					p.queue.Forget(key)
				}
				p.queue.Done(key)
			}
		})
	}
	<-ctx.Done()
	p.queue.ShutDown()
	wg.Wait()
}

// ensureDefaultClass creates the standard StorageClass once; a user may
// change or delete it afterwards (it is not created again while any
// default class exists).
func (p *provisioner) ensureDefaultClass(ctx context.Context) error {
	classes, err := p.client.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, c := range classes.Items {
		if c.Name == DefaultStorageClass || c.Annotations[annDefaultClass] == "true" {
			return nil
		}
	}
	_, err = p.client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: DefaultStorageClass, Annotations: map[string]string{annDefaultClass: "true"}},
		Provisioner:       Provisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

func (p *provisioner) sync(ctx context.Context, key string) error {
	kind, name, _ := cut(key)
	if kind == "volume" {
		return p.reclaim(ctx, name)
	}
	ns, claimName, err := cache.SplitMetaNamespaceKey(name)
	if err != nil {
		return nil
	}
	claim, err := p.claims.PersistentVolumeClaims(ns).Get(claimName)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// kube's binder marks a claim of an external provisioner's class with
	// the provisioner's name once it found no volume to bind.
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil ||
		(claim.Annotations[annStorageProvisioner] != Provisioner && claim.Annotations[annBetaStorageProvisioner] != Provisioner) {
		return nil
	}
	pvName := "pvc-" + string(claim.UID)
	if _, err := p.volumes.Get(pvName); err == nil {
		return nil
	}
	class := ptr.Deref(claim.Spec.StorageClassName, "")
	reclaim := corev1.PersistentVolumeReclaimDelete
	if sc, err := p.classes.Get(class); err == nil && sc.ReclaimPolicy != nil {
		reclaim = *sc.ReclaimPolicy
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: map[string]string{annProvisionedBy: Provisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   claim.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: reclaim,
			StorageClassName:              class,
			VolumeMode:                    claim.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace,
				Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/devplane/volumes/" + pvName, Type: ptr.To(corev1.HostPathDirectoryOrCreate)},
			},
		},
	}
	p.event(claim, corev1.EventTypeNormal, "Provisioning", fmt.Sprintf("External provisioner is provisioning volume for claim %q", ns+"/"+claimName))
	_, err = p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		p.event(claim, corev1.EventTypeWarning, "ProvisioningFailed", fmt.Sprintf("failed to provision volume with StorageClass %q: %v", class, err))
		return err
	}
	p.event(claim, corev1.EventTypeNormal, "ProvisioningSucceeded", fmt.Sprintf("Successfully provisioned volume %s", pvName))
	return nil
}

// event records an event about a claim, as the provisioner does.
func (p *provisioner) event(claim *corev1.PersistentVolumeClaim, typ, reason, message string) {
	if p.recorder != nil {
		p.recorder.Event(claim, typ, reason, message)
	}
}

// reclaim deletes a released volume of ours whose policy is Delete, as an
// external provisioner does.
func (p *provisioner) reclaim(ctx context.Context, name string) error {
	pv, err := p.volumes.Get(name)
	if err != nil {
		return nil
	}
	if pv.Status.Phase != corev1.VolumeReleased || pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.Annotations[annProvisionedBy] != Provisioner {
		return nil
	}
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func cut(key string) (string, string, bool) {
	for i := range key {
		if key[i] == '/' {
			return key[:i], key[i+1:], true
		}
	}
	return key, "", false
}
