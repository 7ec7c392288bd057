# The webhooks' configuration file (clusters, their token keys, API access for
# SubjectAccessReviews) holds secrets, so it lives in Secret Manager and is mounted as a file.
# Per cluster, the kubeconfig the reconcilers use to write into that cluster.
resource "google_secret_manager_secret" "webhook_config" {
  project   = var.project_id
  secret_id = "${var.name_prefix}-webhook-config"
  replication {
    auto {}
  }
}

resource "google_secret_manager_secret" "kubeconfig" {
  for_each  = var.cluster_secrets
  project   = var.project_id
  secret_id = each.value.kubeconfig_secret_id
  replication {
    auto {}
  }
}

resource "google_secret_manager_secret_iam_member" "webhook_reads_config" {
  project   = var.project_id
  secret_id = google_secret_manager_secret.webhook_config.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.webhook.email}"
}

resource "google_secret_manager_secret_iam_member" "reconciler_reads_kubeconfig" {
  for_each  = google_secret_manager_secret.kubeconfig
  project   = var.project_id
  secret_id = each.value.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.reconciler.email}"
}
