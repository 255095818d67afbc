from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, shuffle=True, num_workers=8, persistent_workers=True)
train_loader = DataLoader(train_set, shuffle=True, num_workers=0)
val_loader = DataLoader(val_set, num_workers=8)
train_loader = DataLoader(train_set, shuffle=True, **loader_kwargs)
