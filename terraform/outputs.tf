output "functions_url" {
  description = "FURNISH_FUNCTIONS_URL for infra/webhooks: each webhook is served at <functions_url>/<name>."
  value       = local.functions_url
}

output "webhook_urls" {
  description = "Admission webhook URLs, for infra/webhooks (clientConfig.url); also the audience of each webhook's token."
  value       = { for name in local.webhooks : name => local.function_url[name] }
}

output "topics" {
  description = "The topics the watch relay publishes to (FURNISH_TOPIC_NAMESPACES, FURNISH_TOPIC_TEMPLATES, ...; install_vars hands them to the relay)."
  value       = { for k, t in google_pubsub_topic.events : k => t.name }
}

output "install_vars" {
  description = "Per cluster id: the values of infra/'s template variables that this deployment decides (cluster id, project, relay service account, topic names, functions URL, CA bundle, on GKE the functions' Google users) and the cluster's path credential, for `furnish install --vars <(terraform output -json install_vars | jq .prod)` (docs/operate/install.md). Sensitive: it holds the path credential; read it through a pipe, not into a file."
  value       = local.install_vars
  sensitive   = true
}

output "relay_service_account" {
  description = "The relay's Google identity (bind it to the relay's Kubernetes ServiceAccount)."
  value       = google_service_account.relay.email
}

output "push_service_account" {
  description = "The e-mail the reconcilers accept in push OIDC tokens."
  value       = google_service_account.push.email
}

output "reconciler_service_account" {
  description = "The reconcilers' Google identity: it may read the cluster_secrets kubeconfigs. In a cluster the reconcilers act as the Kubernetes ServiceAccount furnish-system/furnish-reconciler whose token that kubeconfig holds (RBAC in infra/reconciler); this e-mail needs no cluster RBAC."
  value       = google_service_account.reconciler.email
}

output "billing" {
  description = "FURNISH_BILLING for record-billing and `furnish billing report --sink`, the de-duplicating view reports read, and the relay's billing topic (FURNISH_TOPIC_BILLING)."
  value = {
    sink  = "bigquery:${var.project_id}.${google_bigquery_dataset.billing.dataset_id}.${google_bigquery_table.billing.table_id}"
    view  = "${var.project_id}.${google_bigquery_dataset.billing.dataset_id}.${google_bigquery_table.billing_dedup.table_id}"
    topic = google_pubsub_topic.events["billing"].name
  }
}

output "jwt_secrets" {
  description = "Per cluster id: the HS256 key of its webhook JWT (control planes whose admission configuration you set: mint the token of infra/webhooks/apiserver with it). Sensitive."
  value       = { for id, p in random_password.jwt_secret : id => p.result }
  sensitive   = true
}
