package faults

import (
	"errors"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/devplane/devplane/apiserver/request"
)

// Err is the error f answers info with, worded as kube-apiserver words
// that failure; nil when f serves the request.
func (f *Fault) Err(info *request.RequestInfo) error {
	switch f.Error {
	case 409:
		// The store's answer to an update from a stale resourceVersion.
		gr := schema.GroupResource{Group: info.APIGroup, Resource: info.Resource}
		return apierrors.NewConflict(gr, info.Name, errors.New(
			"the object has been modified; please apply your changes to the latest version and try again"))
	case 429:
		// The max-in-flight filter's refusal.
		return apierrors.NewTooManyRequests("Too many requests, please try again later.", f.retryAfterSeconds())
	case 500:
		return apierrors.NewInternalError(errors.New("injected server error"))
	case 503:
		return apierrors.NewServiceUnavailable("the server is currently unable to handle the request")
	case 504:
		// The timeout filter's answer.
		return apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)
	}
	return nil
}

// RetryAfterHeader is the Retry-After header value f's error carries ("" for none).
func (f *Fault) RetryAfterHeader() string {
	switch {
	case f.Error == 429:
		return strconv.Itoa(f.retryAfterSeconds())
	case f.Error == 503 && f.RetryAfter > 0:
		return strconv.Itoa(f.retryAfterSeconds())
	}
	return ""
}

func (f *Fault) retryAfterSeconds() int {
	if f.RetryAfter <= 0 {
		return 1
	}
	return int((f.RetryAfter + time.Second - 1) / time.Second)
}
