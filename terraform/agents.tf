# Google-managed service agents need roles of their own before Furnish works:
# - Pub/Sub's agent forwards undeliverable messages to the dead-letter topic (publisher there,
#   subscriber on each source subscription) and mints the push OIDC tokens (token creator on the
#   push identity);
# - the relay in each cluster publishes as Google service account `relay` through Workload Identity.
locals {
  pubsub_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}

resource "google_pubsub_topic_iam_member" "agent_publishes_dead_letters" {
  project    = var.project_id
  topic      = google_pubsub_topic.dead_letter.name
  role       = "roles/pubsub.publisher"
  member     = local.pubsub_agent
  depends_on = [google_project_service.api]
}

resource "google_pubsub_subscription_iam_member" "agent_forwards_from" {
  for_each     = google_pubsub_subscription.push
  project      = var.project_id
  subscription = each.value.name
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_agent
}

resource "google_service_account_iam_member" "agent_signs_push_tokens" {
  service_account_id = google_service_account.push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_agent
  depends_on         = [google_project_service.api]
}

# Workload Identity: the relay's Kubernetes ServiceAccount (infra/relay/serviceaccount.yaml) acts
# as Google service account `relay`. One member per workload identity pool that runs a relay.
resource "google_service_account_iam_member" "relay_workload_identity" {
  for_each           = toset(var.relay_workload_identity_pools)
  service_account_id = google_service_account.relay.name
  role               = "roles/iam.workloadIdentityUser"
  member             = "serviceAccount:${each.key}[${local.relay_kubernetes_service_account}]"
}
