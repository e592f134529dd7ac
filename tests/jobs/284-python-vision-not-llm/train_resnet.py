"""ResNet-50 on an ImageNet-style folder, DistributedDataParallel."""
import argparse
import os

import torch
import torch.distributed as dist
import torchvision
from torch.nn.parallel import DistributedDataParallel as DDP

ap = argparse.ArgumentParser()
ap.add_argument("--epochs", type=int, default=90)
ap.add_argument("--batch-size", type=int, default=256)
ap.add_argument("--data", default="/datasets/imagenet")
args = ap.parse_args()

dist.init_process_group("nccl")
rank = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(rank)
model = DDP(torchvision.models.resnet50().cuda(), device_ids=[rank])
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = torch.utils.data.DataLoader(
    torchvision.datasets.ImageFolder(args.data + "/train"), batch_size=args.batch_size)
for epoch in range(args.epochs):
    for images, labels in loader:
        loss = torch.nn.functional.cross_entropy(model(images.cuda()), labels.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        torch.save(model.state_dict(), f"resnet50-{epoch}.pt")
