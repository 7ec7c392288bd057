# The webhooks' configuration file (clusters, their token keys, API access for
# SubjectAccessReviews) holds secrets, so it lives in Secret Manager and is mounted as a file.
# Per cluster of cluster_secrets (not GKE: gke.tf), the kubeconfig the reconcilers use to write into that cluster.
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

# The credentials each cluster authenticates to the webhooks with, generated here so that the
# first apply gives the webhooks a configuration they can start with: a path credential (managed
# control planes: GKE, EKS, AKS; output install_vars hands it to `furnish install`) and an HS256 key for the
# bearer JWT (control planes whose admission configuration you set). Both are in Terraform state:
# keep the state as secret as the credentials themselves. Rotate with `terraform apply
# -replace='random_password.path_credential["<id>"]'`, then `furnish install` again.
resource "random_password" "path_credential" {
  for_each = local.cluster_ids
  length   = 48
  special  = false
}

resource "random_password" "jwt_secret" {
  for_each = local.cluster_ids
  length   = 64
  special  = false
}

locals {
  # Every cluster Furnish serves: GKE clusters (gke.tf) and the others (cluster_secrets).
  cluster_ids = toset(concat(keys(var.gke_clusters), keys(var.cluster_secrets)))

  # What decides in each cluster's entry of the webhooks' configuration (below): on GKE the
  # reconciler (guard, trusted creator) is the reconcilers' Google account, the user GKE names
  # them; organizations as var.organizations. Also handed to `furnish install` (install_vars
  # FURNISH_POLICY_SETTINGS), whose in-tree policies must name the principals the webhooks name.
  # Nulls filtered out: a conditional between {} and an object is a type error in Terraform.
  policy_settings = { for id in local.cluster_ids : id => { for k, v in {
    organizations   = { enabled = var.organizations }
    guard           = contains(keys(var.gke_clusters), id) ? { reconciler = [google_service_account.reconciler.email] } : null
    trustedCreators = contains(keys(var.gke_clusters), id) ? [google_service_account.reconciler.email] : null
  } : k => v if v != null } }

  # The webhooks' configuration file (README, Configuration), version 1. A later version, added
  # out of band, takes over (`latest`); `terraform apply` writes this one again only when its
  # inputs change.
  webhook_config = yamlencode({
    publicUrl = local.functions_url
    clusters = concat(
      # GKE: the webhooks ask the API server as their Google service account.
      [for id in keys(var.gke_clusters) : merge({
        id              = id
        jwt             = { secret = random_password.jwt_secret[id].result }
        pathCredentials = [random_password.path_credential[id].result]
        api             = merge(local.gke_api[id], { credential = "google" })
      }, local.policy_settings[id])],
      # Optional keys are dropped by filtering out nulls: a conditional between {} and an object
      # with attributes is a type error in Terraform.
      [for id, c in var.cluster_secrets : merge(
        { id = id, jwt = { secret = random_password.jwt_secret[id].result }, pathCredentials = [random_password.path_credential[id].result] },
        local.policy_settings[id],
        { for k, v in {
          api = c.api == null ? null : merge(
            { server = c.api.server, caPem = c.api.ca_pem },
            { for tk, tv in { token = try(var.cluster_webhook_tokens[id], null) } : tk => tv if tv != null },
          )
        } : k => v if v != null },
      )],
    )
  })
}

resource "google_secret_manager_secret_version" "webhook_config" {
  secret      = google_secret_manager_secret.webhook_config.id
  secret_data = local.webhook_config
  lifecycle {
    precondition {
      condition     = length(local.cluster_ids) > 0 && length(setintersection(keys(var.gke_clusters), keys(var.cluster_secrets))) == 0
      error_message = "Give at least one cluster, in gke_clusters or cluster_secrets, and each cluster id in only one of them."
    }
  }
}
