package main

// The --careful peer: the informer a careful Go engineer would write for a GPU cost controller.
// Its transform (informers.WithTransform, i.e. each informer's SetTransform) replaces every
// object, before it enters the cache, with a new one holding only what such a controller reads:
//
//   - a GPU pod (one asking for an nvidia.com/ resource in any container, or naming a
//     ResourceClaim): name, namespace, uid, resourceVersion, labels, deletionTimestamp, the
//     controller owner reference (kind, name, uid), nodeName, each container's name and its
//     nvidia.com/ limits and requests (and resources.claims), spec.resourceClaims, phase, start
//     time, each container status's name and termination times, status.resourceClaimStatuses;
//   - any other pod: a stub of name, namespace, uid and resourceVersion (the cache still has to
//     hold every pod so that updates and deletes find their object);
//   - a node: name, uid, resourceVersion, labels, creationTimestamp, and the nvidia.com/ entries
//     of its allocatable and capacity;
//   - a namespace: name, uid, resourceVersion, labels;
//   - with --dra, a ResourceClaim: name, namespace, uid, resourceVersion, labels, its allocation
//     results (request, driver, pool, device) and reservedFor; a ResourceSlice: name, uid,
//     resourceVersion, driver, nodeName, pool, and its devices' names, attributes and capacity.
//
// The transform builds a fresh object from the fields it keeps, so the decoded original becomes
// garbage at once, and applying it to its own result gives the same result (client-go may call
// it again on an object it already transformed).

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const gpuPrefix = "nvidia.com/"

func gpuResources(in corev1.ResourceList) corev1.ResourceList {
	var out corev1.ResourceList
	for name, q := range in {
		if strings.HasPrefix(string(name), gpuPrefix) {
			if out == nil {
				out = corev1.ResourceList{}
			}
			out[name] = q
		}
	}
	return out
}

func carefulContainers(in []corev1.Container) []corev1.Container {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(in))
	for i, c := range in {
		out[i] = corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{
			Limits:   gpuResources(c.Resources.Limits),
			Requests: gpuResources(c.Resources.Requests),
			Claims:   c.Resources.Claims,
		}}
	}
	return out
}

func carefulPod(p *corev1.Pod) *corev1.Pod {
	if !gpuPod(p) {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace,
			UID: p.UID, ResourceVersion: p.ResourceVersion}}
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
			ResourceVersion: p.ResourceVersion, Labels: p.Labels,
			DeletionTimestamp: p.DeletionTimestamp},
		Spec: corev1.PodSpec{NodeName: p.Spec.NodeName,
			InitContainers: carefulContainers(p.Spec.InitContainers),
			Containers:     carefulContainers(p.Spec.Containers),
			ResourceClaims: p.Spec.ResourceClaims},
		Status: corev1.PodStatus{Phase: p.Status.Phase, StartTime: p.Status.StartTime,
			ResourceClaimStatuses: p.Status.ResourceClaimStatuses},
	}
	if owner := metav1.GetControllerOfNoCopy(p); owner != nil {
		yes := true
		out.OwnerReferences = []metav1.OwnerReference{{Kind: owner.Kind, Name: owner.Name,
			UID: owner.UID, Controller: &yes}}
	}
	if n := len(p.Status.ContainerStatuses); n > 0 {
		out.Status.ContainerStatuses = make([]corev1.ContainerStatus, n)
		for i, cs := range p.Status.ContainerStatuses {
			out.Status.ContainerStatuses[i].Name = cs.Name
			if t := cs.State.Terminated; t != nil {
				out.Status.ContainerStatuses[i].State.Terminated = &corev1.ContainerStateTerminated{
					StartedAt: t.StartedAt, FinishedAt: t.FinishedAt}
			}
		}
	}
	return out
}

func carefulNode(n *corev1.Node) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion,
			Labels: n.Labels, CreationTimestamp: n.CreationTimestamp},
		Status: corev1.NodeStatus{Allocatable: gpuResources(n.Status.Allocatable),
			Capacity: gpuResources(n.Status.Capacity)},
	}
}

func carefulNamespace(ns *corev1.Namespace) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, UID: ns.UID,
		ResourceVersion: ns.ResourceVersion, Labels: ns.Labels}}
}

func carefulClaim(c *resourcev1.ResourceClaim) *resourcev1.ResourceClaim {
	out := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: c.Name, Namespace: c.Namespace, UID: c.UID,
			ResourceVersion: c.ResourceVersion, Labels: c.Labels},
		Status: resourcev1.ResourceClaimStatus{ReservedFor: c.Status.ReservedFor},
	}
	if a := c.Status.Allocation; a != nil {
		res := make([]resourcev1.DeviceRequestAllocationResult, len(a.Devices.Results))
		for i, r := range a.Devices.Results {
			res[i] = resourcev1.DeviceRequestAllocationResult{Request: r.Request,
				Driver: r.Driver, Pool: r.Pool, Device: r.Device}
		}
		out.Status.Allocation = &resourcev1.AllocationResult{
			Devices: resourcev1.DeviceAllocationResult{Results: res}}
	}
	return out
}

func carefulSlice(s *resourcev1.ResourceSlice) *resourcev1.ResourceSlice {
	devs := make([]resourcev1.Device, len(s.Spec.Devices))
	for i, d := range s.Spec.Devices {
		devs[i] = resourcev1.Device{Name: d.Name, Attributes: d.Attributes, Capacity: d.Capacity}
	}
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: s.Name, UID: s.UID,
			ResourceVersion: s.ResourceVersion},
		Spec: resourcev1.ResourceSliceSpec{Driver: s.Spec.Driver, NodeName: s.Spec.NodeName,
			Pool: s.Spec.Pool, Devices: devs},
	}
}

// carefulTransform is the --careful informers' transform. Anything else (a tombstone, say)
// passes through unchanged.
func carefulTransform(obj interface{}) (interface{}, error) {
	switch o := obj.(type) {
	case *corev1.Pod:
		return carefulPod(o), nil
	case *corev1.Node:
		return carefulNode(o), nil
	case *corev1.Namespace:
		return carefulNamespace(o), nil
	case *resourcev1.ResourceClaim:
		return carefulClaim(o), nil
	case *resourcev1.ResourceSlice:
		return carefulSlice(o), nil
	}
	return obj, nil
}
