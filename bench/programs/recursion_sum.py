def total(nums):
    if not nums:
        return 0
    return nums[0] + total(nums[1:])


s = total([4, 5, 6])
print(s)
