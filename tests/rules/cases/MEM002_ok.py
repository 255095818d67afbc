from torch.utils.data import DataLoader

train_loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=8)
val_loader = DataLoader(val_set, batch_size=64)
test_loader = DataLoader(test_set, batch_size=64, shuffle=False, num_workers=0)
kw = {"num_workers": 4}
train_loader = DataLoader(train_set, shuffle=True, **kw)
