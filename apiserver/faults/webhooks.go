package faults

import (
	"context"
	"slices"
)

type webhookTimeoutKey struct{}

// WithWebhookTimeout marks a request's context: the webhooks wt names
// time out when admission calls them. The filter sets it; the webhook
// dispatcher asks WebhookTimesOut before each call.
func WithWebhookTimeout(ctx context.Context, wt *WebhookTimeout) context.Context {
	return context.WithValue(ctx, webhookTimeoutKey{}, wt)
}

// WebhookTimesOut reports whether the named webhook is to time out for
// the request ctx belongs to.
func WebhookTimesOut(ctx context.Context, webhook string) bool {
	wt, _ := ctx.Value(webhookTimeoutKey{}).(*WebhookTimeout)
	return wt != nil && (len(wt.Webhooks) == 0 || slices.Contains(wt.Webhooks, webhook))
}
