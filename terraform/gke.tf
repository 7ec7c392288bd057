# GKE clusters, reached by the functions with their own Google service accounts: GKE takes a
# Google access token as the bearer (the functions' metadata server hands one out) and names the
# caller by the account's e-mail, which `furnish install` binds in RBAC (install_vars:
# FURNISH_RECONCILER_USER, FURNISH_WEBHOOK_USER). Nothing here waits on the cluster side: the
# endpoint and CA are read from GKE itself, and no Kubernetes token exists anywhere.
data "google_container_cluster" "gke" {
  for_each = var.gke_clusters
  project  = each.value.project == null ? var.project_id : each.value.project
  name     = each.value.name
  location = each.value.location
}

locals {
  # The API server as the functions reach it: the DNS-based endpoint (its certificate is publicly
  # trusted, so no CA; no network path into the VPC needed), or the IP endpoint with the cluster CA.
  # Absent attributes are dropped (null), as a conditional between object shapes is a type error.
  gke_api = { for id, c in var.gke_clusters : id => { for k, v in {
    server = c.dns_endpoint ? "https://${data.google_container_cluster.gke[id].control_plane_endpoints_config[0].dns_endpoint_config[0].endpoint}" : "https://${data.google_container_cluster.gke[id].endpoint}"
    caPem  = c.dns_endpoint ? null : base64decode(data.google_container_cluster.gke[id].master_auth[0].cluster_ca_certificate)
  } : k => v if v != null } }

  # The projects holding GKE clusters: GKE lets a Google identity authenticate only with
  # container.clusters.get there (and container.clusters.connect for the DNS endpoint).
  gke_projects = toset([for c in values(var.gke_clusters) : c.project == null ? var.project_id : c.project])
}

# roles/container.clusterViewer: enough to authenticate and to read cluster metadata, nothing
# inside the cluster; Kubernetes RBAC (infra/, bound by `furnish install`) decides the rest.
resource "google_project_iam_member" "webhook_authenticates_to_gke" {
  for_each = local.gke_projects
  project  = each.key
  role     = "roles/container.clusterViewer"
  member   = "serviceAccount:${google_service_account.webhook.email}"
}

resource "google_project_iam_member" "reconciler_authenticates_to_gke" {
  for_each = local.gke_projects
  project  = each.key
  role     = "roles/container.clusterViewer"
  member   = "serviceAccount:${google_service_account.reconciler.email}"
}
