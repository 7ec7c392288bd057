output "webhook_urls" {
  description = "Admission webhook URLs, for infra/webhooks (clientConfig.url)."
  value       = { for name in local.webhooks : name => google_cloudfunctions2_function.fn[name].service_config[0].uri }
}

output "topic" {
  description = "The topic the watch relay publishes to."
  value       = google_pubsub_topic.events.id
}

output "push_service_account" {
  description = "The e-mail the reconcilers accept in push OIDC tokens."
  value       = google_service_account.push.email
}

output "reconciler_service_account" {
  description = "The reconcilers' identity (grant it the cluster RBAC in infra/reconciler)."
  value       = google_service_account.reconciler.email
}
