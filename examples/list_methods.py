def f(nums, target):
    nums = nums.copy()
    nums.sort(reverse=True)
    idx = nums.index(target) if target in nums else -1
    nums.insert(0, idx)
    nums.extend([target] * 2)
    while nums.count(target) > 1:
        nums.remove(target)
    return nums


result = f([3, 1, 4, 1, 5], 4)
