package testenv

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/yaml"
)

// ServesCRDs reports whether the server serves apiextensions.k8s.io/v1;
// false only when it answers 404, so tests can skip naming the missing
// capability rather than fail.
func (i *Instance) ServesCRDs(ctx context.Context) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(i.Config())
	if err != nil {
		return false, err
	}
	err = dc.RESTClient().Get().AbsPath("/apis/apiextensions.k8s.io/v1").Do(ctx).Error()
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// ReadCRDs reads the CustomResourceDefinitions in files or directories
// (.yaml, .yml, .json; multi-document YAML; other kinds are ignored).
func ReadCRDs(paths ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			switch strings.ToLower(filepath.Ext(e.Name())) {
			case ".yaml", ".yml", ".json":
				if !e.IsDir() {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
		}
	}
	sort.Strings(files)
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		crds, err := readCRDFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, crds...)
	}
	return out, nil
}

func readCRDFile(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*apiextensionsv1.CustomResourceDefinition
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &tm); err != nil {
			return nil, err
		}
		if tm.Kind != "CustomResourceDefinition" {
			continue
		}
		if tm.APIVersion != apiextensionsv1.SchemeGroupVersion.String() {
			return nil, fmt.Errorf("CustomResourceDefinition of %s: only %s is supported", tm.APIVersion, apiextensionsv1.SchemeGroupVersion)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(doc, crd); err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
}

// installCRDs creates Options' CRDs and waits until they are Established
// and discoverable.
func (i *Instance) installCRDs(ctx context.Context, opts Options) error {
	crds, err := ReadCRDs(opts.CRDDirectoryPaths...)
	if err != nil {
		return fmt.Errorf("testenv: reading CRDs: %w", err)
	}
	crds = append(crds, opts.CRDs...)
	if len(crds) == 0 {
		return nil
	}
	return i.InstallCRDs(ctx, crds...)
}

// InstallCRDs creates (or updates) CRDs and waits until each is
// Established and its resources are in discovery. It wraps
// ErrCRDsNotServed when the server does not serve CRDs.
func (i *Instance) InstallCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	served, err := i.ServesCRDs(ctx)
	if err != nil {
		return fmt.Errorf("testenv: asking for apiextensions.k8s.io: %w", err)
	}
	if !served {
		return fmt.Errorf("testenv: installing %d CRD(s): %w (GET /apis/apiextensions.k8s.io/v1 answered 404)", len(crds), ErrCRDsNotServed)
	}
	client, err := apiextensionsclient.NewForConfig(i.Config())
	if err != nil {
		return err
	}
	api := client.ApiextensionsV1().CustomResourceDefinitions()
	for _, in := range crds {
		crd := in.DeepCopy()
		crd.ResourceVersion = ""
		_, err := api.Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			existing, gerr := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			crd.ResourceVersion = existing.ResourceVersion
			_, err = api.Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("testenv: installing CRD %s: %w", crd.Name, err)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(i.Config())
	if err != nil {
		return err
	}
	for _, crd := range crds {
		err := wait.PollUntilContextCancel(ctx, 5*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil || !established(got) {
				return false, nil
			}
			return discoverable(dc, got), nil
		})
		if err != nil {
			return fmt.Errorf("testenv: CRD %s not Established and discoverable: %w", crd.Name, err)
		}
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

// discoverable reports whether every served version lists the resource.
func discoverable(dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		list, err := dc.ServerResourcesForGroupVersion(crd.Spec.Group + "/" + v.Name)
		if err != nil {
			return false
		}
		found := false
		for _, r := range list.APIResources {
			if r.Name == crd.Spec.Names.Plural {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
