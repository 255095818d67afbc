from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)  # expect: MEM006
loader = DataLoader(train_ds, num_workers=args.workers, prefetch_factor=4)  # expect: MEM006
